"""The Dynamo API: pydantic models per version and the normalised graph model."""
