// The Storage account: the app's Blob container (artifacts, reports, payloads), the Functions host's own
// containers and the Durable Functions task hub (queues and tables) on the Azure Storage backend. Shared keys
// are off: the host and the app reach it with the managed identity only. The deployment package is NOT here
// (deployment-storage.bicep): the app's identity holds account-wide blob rights on this account.
param name string
param location string
param tags object
@description('Blob containers to create (the app\'s own; the host creates its containers itself).')
param containerNames array
@allowed(['Standard_LRS', 'Standard_ZRS', 'Standard_GRS', 'Standard_GZRS'])
param sku string = 'Standard_LRS'
param principalId string
param operatorPrincipalId string = ''
param operatorPrincipalType string = 'User'
@allowed(['Enabled', 'Disabled'])
@description('Disabled with vnetEnabled: the app then reaches blob, queue and table through private endpoints (network.bicep).')
param publicNetworkAccess string = 'Enabled'

var roles = {
  // Blob, account-wide: the host creates its containers (azure-webjobs-hosts, -secrets, Durable's leases
  // and large messages), which no container-scoped role allows; Owner is what Microsoft documents for
  // identity-based AzureWebJobsStorage, and it also grants user delegation keys, which sign the perf
  // upload URLs without an account key.
  blobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  // Durable Functions' Azure Storage backend: control and work-item queues, history and instance tables.
  queueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  tableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
}

resource account 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: { name: sku }
  properties: {
    accessTier: 'Hot'
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false
    defaultToOAuthAuthentication: true
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: publicNetworkAccess
    networkAcls: {
      defaultAction: publicNetworkAccess == 'Disabled' ? 'Deny' : 'Allow'
      bypass: 'AzureServices'
    }
    encryption: {
      keySource: 'Microsoft.Storage'
      requireInfrastructureEncryption: true
      services: {
        blob: { enabled: true, keyType: 'Account' }
        queue: { enabled: true, keyType: 'Account' }
        table: { enabled: true, keyType: 'Account' }
        file: { enabled: true, keyType: 'Account' }
      }
    }
  }
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: account
  name: 'default'
  properties: {
    deleteRetentionPolicy: { enabled: true, days: 7 }
    containerDeleteRetentionPolicy: { enabled: true, days: 7 }
  }
}

resource containers 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = [
  for container in containerNames: {
    parent: blobService
    name: container
    properties: { publicAccess: 'None' }
  }
]

resource queueService 'Microsoft.Storage/storageAccounts/queueServices@2023-05-01' = {
  parent: account
  name: 'default'
  properties: {}
}

resource appRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for role in items(roles): {
    name: guid(account.id, principalId, role.value)
    scope: account
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role.value)
      principalId: principalId
      principalType: 'ServicePrincipal'
    }
  }
]

resource operatorBlobRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(operatorPrincipalId)) {
  name: guid(account.id, operatorPrincipalId, roles.blobDataOwner)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.blobDataOwner)
    principalId: operatorPrincipalId
    principalType: operatorPrincipalType
  }
}

output name string = account.name
output id string = account.id
output blobEndpoint string = account.properties.primaryEndpoints.blob
