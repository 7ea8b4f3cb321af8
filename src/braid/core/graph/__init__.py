"""Graph searches over a topology and a window's free capacity: paths, reach, walls, bounds."""
