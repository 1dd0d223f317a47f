// The Flex Consumption deployment package, in a storage account of its own. The app's identity needs
// account-wide blob rights on its own account (the Functions host creates its containers: "read and write
// access to blobs and the ability to create containers", learn.microsoft.com/azure/azure-functions/
// functions-reference#connecting-to-host-storage-with-an-identity; Durable adds its lease and large-message
// containers), so a package container there would be writable by the app: code that runs as the app could
// plant the package the next cold start loads. Here only the deployment identity (functionAppConfig's
// deployment storage authentication) and the operator hold a role, and only on the package container.
// That identity is separate from the identity the app's SDKs use; it is not unreachable from code running in
// the app: it is attached to the site (Flex needs that to use it), and the managed identity endpoint hands out a
// token for any attached identity (learn.microsoft.com/azure/app-service/overview-managed-identity, REST
// endpoint reference). So a planted package must be visible and reversible: blob versions here, and the
// account's StorageWrite logs (diagnostics.bicep; docs/deploy.md names the query).
param name string
param location string
param tags object
param containerName string
@allowed(['Standard_LRS', 'Standard_ZRS', 'Standard_GRS', 'Standard_GZRS'])
param sku string = 'Standard_LRS'
@description('The deployment identity: the platform writes the package (one deploy, `az functionapp deployment source config-zip`, azd) and reads it on every cold start with it.')
param principalId string
@description('Who deploys (azd\'s AZURE_PRINCIPAL_ID): may write the package directly too.')
param operatorPrincipalId string = ''
param operatorPrincipalType string = 'User'
@allowed(['Enabled', 'Disabled'])
@description('Disabled with vnetEnabled: the package is then read through the private endpoint (network.bicep).')
param publicNetworkAccess string = 'Enabled'

// Contributor, not Owner: writing and reading the package needs no ACLs and no user delegation keys. It is
// also the role `az functionapp create --deployment-storage-auth-type UserAssignedIdentity` grants the
// deployment identity (Azure/azure-cli, command_modules/appservice/_constants.py:
// STORAGE_BLOB_DATA_CONTRIBUTOR_ROLE_ID), there on the whole account; here only on the container.
var blobDataContributor = 'ba92f5b4-2d11-453d-a403-e96b0029c9fe'

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
        file: { enabled: true, keyType: 'Account' }
      }
    }
  }
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: account
  name: 'default'
  properties: {
    // A bad or planted package can be rolled back to the one before it: every overwrite keeps a version.
    isVersioningEnabled: true
    deleteRetentionPolicy: { enabled: true, days: 7 }
    containerDeleteRetentionPolicy: { enabled: true, days: 7 }
  }
}

resource container 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: blobService
  name: containerName
  properties: { publicAccess: 'None' }
}

resource deployerRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(container.id, principalId, blobDataContributor)
  scope: container
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', blobDataContributor)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

resource operatorRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(operatorPrincipalId)) {
  name: guid(container.id, operatorPrincipalId, blobDataContributor)
  scope: container
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', blobDataContributor)
    principalId: operatorPrincipalId
    principalType: operatorPrincipalType
  }
}

output name string = account.name
output id string = account.id
output blobEndpoint string = account.properties.primaryEndpoints.blob
