"""Pure domain logic: no I/O, no clocks, no sockets, no database; time is passed in."""
