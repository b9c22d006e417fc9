module function-dynamo.local/oci-registry

go 1.24.0

require github.com/google/go-containerregistry v0.20.7
