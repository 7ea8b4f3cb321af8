"""Volume transfers: bytes to move by a deadline, answered as a rate profile over time."""
