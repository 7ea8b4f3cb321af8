"""The provisioner: keeps the switches holding exactly the reservations due at each moment."""
