// Cosmos DB (NoSQL API): the database and every container the app declares (partition key, indexing policy,
// TTL), serverless by default. Keys are off (disableLocalAuth): the app's identity has the built-in Data
// Contributor role on the account, and the operator (when given) too, to mint API keys.
param name string
param location string
param tags object
param databaseName string
@description('The app\'s containers from generated/app.json: name and the container resource (id, partition key, indexing policy, TTL).')
param containers array
param serverless bool = true
// Cosmos DB sets zone redundancy when a region is added to the account (here: when the account is created); an
// existing region keeps what it was created with, so a redeploy that flips this is refused.
@description('Spread the account\'s replicas over the region\'s availability zones (regions with zones only).')
param zoneRedundant bool = false
param autoscaleMaxThroughput int = 1000
param principalId string
param operatorPrincipalId string = ''
@allowed(['Enabled', 'Disabled'])
@description('Disabled with vnetEnabled: reached through its private endpoint (network.bicep).')
param publicNetworkAccess string = 'Enabled'

// Cosmos DB Built-in Data Contributor (a data-plane role: sqlRoleAssignments, not Azure RBAC).
var dataContributor = '00000000-0000-0000-0000-000000000002'

resource account 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' = {
  name: name
  location: location
  tags: tags
  kind: 'GlobalDocumentDB'
  properties: {
    databaseAccountOfferType: 'Standard'
    locations: [
      { locationName: location, failoverPriority: 0, isZoneRedundant: zoneRedundant }
    ]
    consistencyPolicy: { defaultConsistencyLevel: 'Session' }
    capabilities: serverless ? [{ name: 'EnableServerless' }] : []
    disableLocalAuth: true
    disableKeyBasedMetadataWriteAccess: true
    minimalTlsVersion: 'Tls12'
    publicNetworkAccess: publicNetworkAccess
    backupPolicy: {
      type: 'Continuous'
      continuousModeProperties: { tier: 'Continuous7Days' }
    }
  }
}

resource database 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases@2024-11-15' = {
  parent: account
  name: databaseName
  properties: {
    resource: { id: databaseName }
    options: serverless ? {} : { autoscaleSettings: { maxThroughput: autoscaleMaxThroughput } }
  }
}

resource sqlContainers 'Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers@2024-11-15' = [
  for c in containers: {
    parent: database
    name: c.name
    properties: {
      resource: c.resource
    }
  }
]

resource appDataRole 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = {
  parent: account
  name: guid(account.id, principalId, dataContributor)
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/${dataContributor}'
    principalId: principalId
    scope: account.id
  }
}

resource operatorDataRole 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-11-15' = if (!empty(operatorPrincipalId)) {
  parent: account
  name: guid(account.id, operatorPrincipalId, dataContributor)
  properties: {
    roleDefinitionId: '${account.id}/sqlRoleDefinitions/${dataContributor}'
    principalId: operatorPrincipalId
    scope: account.id
  }
}

output endpoint string = account.properties.documentEndpoint
output name string = account.name
