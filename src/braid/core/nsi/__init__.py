"""NSI Connection Service 2.0: state machines, STPs and error codes, free of SOAP and I/O."""
