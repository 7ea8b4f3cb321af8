"""Southbound: rule sets onto switches, directly (ovs-ofctl) or through `braid controller`."""
