"""The DynamoComponentDeployment's pipeline step (Input ``ComponentDeployment``): render and status."""
