"""Success rate against the number of paths, per negotiation strategy (`braid sim`)."""
