"""One router per resource of section 4: extractions and the vault."""
