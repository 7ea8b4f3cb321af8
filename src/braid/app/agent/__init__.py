"""A domain agent: its scheduler, holds and votes, behind one service for gRPC."""
