"""Mininet + Open vSwitch experiments: a session, its traffic, reports and the experiments."""
