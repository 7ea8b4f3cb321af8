"""Fakes shipped for tests: a switch that evaluates OpenFlow tables, and a network of them."""
