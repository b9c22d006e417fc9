"""The DynamoGraphDeploymentScalingAdapter's pipeline step (Input ``ScalingAdapter``): status only."""
