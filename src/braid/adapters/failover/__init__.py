"""Fail-over's outside world: trace and event files, RTT probes, throughput counters,
the sites' fail-over actions, the monitor's event log and its metrics."""
