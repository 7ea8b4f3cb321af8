"""Services (one way in for REST, gRPC and CLI) and the ports they need; imports only `core`."""
