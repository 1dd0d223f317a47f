// Key Vault for the app's secrets (RBAC authorization, soft delete, purge protection when asked). A secret parameter left empty
// creates nothing; a given one becomes a secret here and main.bicep sets a Key Vault reference as its app
// setting, which the platform resolves with the app's identity (Key Vault Secrets User). No secret value is
// ever an app setting or a deployment output.
param name string
param location string
param tags object
param principalId string
// Once on, purge protection cannot be turned off (the service refuses false on a vault that has it), so a prod
// vault keeps it for good; dev leaves it off so a deleted environment's vault can be purged and its name reused.
@description('Purge protection: a deleted vault and its secrets cannot be purged during the retention period.')
param purgeProtection bool = true
@description('{ entries: [{ name, value }] }: each secret\'s name in the vault and its value (main.bicep leaves out the ones not given).')
@secure()
param secrets object = {}
@allowed(['Enabled', 'Disabled'])
@description('Disabled with vnetEnabled: reached through its private endpoint (network.bicep).')
param publicNetworkAccess string = 'Enabled'

var keyVaultSecretsUser = '4633458b-17de-408a-b874-0445c86b69e6'

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: tenant().tenantId
    sku: { family: 'A', name: 'standard' }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 90
    // null, not false: the service accepts only true or an absent value for this property.
    enablePurgeProtection: purgeProtection ? true : null
    publicNetworkAccess: publicNetworkAccess
    networkAcls: { defaultAction: 'Allow', bypass: 'AzureServices' }
  }
}

resource secretValues 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = [
  for s in secrets.entries: {
    parent: vault
    name: s.name
    properties: {
      value: s.value
      contentType: 'text/plain'
      attributes: { enabled: true }
    }
  }
]

resource secretsUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vault.id, principalId, keyVaultSecretsUser)
  scope: vault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', keyVaultSecretsUser)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

output name string = vault.name
output uri string = vault.properties.vaultUri
