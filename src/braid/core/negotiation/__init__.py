"""Multi-domain negotiation: domain paths, offer composition, SDX rule plans."""
