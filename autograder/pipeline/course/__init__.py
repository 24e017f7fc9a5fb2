"""The nbgrader course: folders, gradebook, secret, release, deadlines, extensions, nbgrader."""
