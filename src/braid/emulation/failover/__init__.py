"""`braid emulate failover`'s parts: the lab, the groups, probe timing, the report, figures."""
