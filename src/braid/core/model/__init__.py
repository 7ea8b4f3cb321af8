"""The model every query reads: units, intervals, timelines, topology, paths, bookings, loads."""
