"""The planner: typed requests in, typed decisions out, each booking seen by the next."""
