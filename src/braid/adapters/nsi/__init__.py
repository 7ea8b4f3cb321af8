"""NSI CS 2.0 on the wire: a hardened XML parser, the SOAP codec, NML and discovery
documents, and the courier that POSTs to requesters."""
