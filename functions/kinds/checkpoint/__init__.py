"""The DynamoCheckpoint's pipeline step (Input ``Checkpoint``): the checkpoint Job, the PodSnapshot, the phase."""
