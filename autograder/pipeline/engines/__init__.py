"""Running the workers over a class: the process pool or Dask, what they pass, worker deaths."""
