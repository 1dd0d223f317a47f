// The app's user-assigned managed identity. User-assigned (not system-assigned) so every role assignment
// exists before the app first starts, and the identity outlives a re-created app.
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
