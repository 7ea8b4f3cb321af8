"""braid as an NSI CS 2.0 provider (uPA) for its own domain, over the reservation service."""
