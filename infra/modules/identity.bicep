// A user-assigned managed identity: the app's (every data role the code needs) and, a second one, the
// deployment identity (only the package container, deployment-storage.bicep). User-assigned (not
// system-assigned) so every role assignment exists before the app first starts, and it outlives a re-created app.
param name string
param location string
param tags object

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: name
  location: location
  tags: tags
}

output id string = identity.id
output principalId string = identity.properties.principalId
output clientId string = identity.properties.clientId
