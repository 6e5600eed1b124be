"""Price sheets: parsing and validation, GPU name resolution, interconnect rules, ownership math."""
