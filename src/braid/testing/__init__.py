"""Fakes shipped for tests: a switch that evaluates OpenFlow tables, a network of them, and
waiting for a started `braid serve` to answer."""
