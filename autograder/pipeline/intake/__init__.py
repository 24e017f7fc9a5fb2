"""Taking submissions in: the notebook checked and rebuilt, a Canvas zip, ids, roster, times."""
