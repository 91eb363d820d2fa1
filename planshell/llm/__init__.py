"""Model providers behind one streaming protocol (no Textual here)."""
