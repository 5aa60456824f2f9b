"""Privacy requests (show, export, erase what is stored about one person) and retention."""
