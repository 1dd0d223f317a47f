// Diagnostic settings: who read which secret (Key Vault AuditEvent), every read, write and delete on blob,
// queue and table (both storage accounts: a write to the deployment package shows here), Cosmos DB's data-
// and control-plane requests, and the Functions host's own log, all into the Log Analytics workspace.
// Retention is the workspace's (monitoring.bicep's retentionInDays): a diagnostic setting's own retention
// is deprecated.
param workspaceId string
param keyVaultName string
param storageAccountName string
param deploymentStorageAccountName string
param cosmosAccountName string
param functionAppName string
@description('The host\'s FunctionAppLogs as a diagnostic setting on the site. Flex Consumption\'s support for it is not verified without a subscription: false lets a deployment that refuses it go through (Application Insights still has the logs).')
param functionAppLogs bool = true

var settingName = 'to-log-analytics'
var storageLogs = [
  { category: 'StorageRead', enabled: true }
  { category: 'StorageWrite', enabled: true }
  { category: 'StorageDelete', enabled: true }
]
var storageMetrics = [{ category: 'Transaction', enabled: true }]

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' existing = {
  name: keyVaultName
}

resource appStorage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource appBlob 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' existing = {
  parent: appStorage
  name: 'default'
}

resource appQueue 'Microsoft.Storage/storageAccounts/queueServices@2023-05-01' existing = {
  parent: appStorage
  name: 'default'
}

resource appTable 'Microsoft.Storage/storageAccounts/tableServices@2023-05-01' existing = {
  parent: appStorage
  name: 'default'
}

resource deploymentStorage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: deploymentStorageAccountName
}

resource deploymentBlob 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' existing = {
  parent: deploymentStorage
  name: 'default'
}

resource cosmos 'Microsoft.DocumentDB/databaseAccounts@2024-11-15' existing = {
  name: cosmosAccountName
}

resource functionApp 'Microsoft.Web/sites@2024-04-01' existing = {
  name: functionAppName
}

resource vaultLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: settingName
  scope: vault
  properties: {
    workspaceId: workspaceId
    logs: [{ category: 'AuditEvent', enabled: true }]
    metrics: [{ category: 'AllMetrics', enabled: true }]
  }
}

resource appBlobLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: settingName
  scope: appBlob
  properties: {
    workspaceId: workspaceId
    logs: storageLogs
    metrics: storageMetrics
  }
}

resource appQueueLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: settingName
  scope: appQueue
  properties: {
    workspaceId: workspaceId
    logs: storageLogs
    metrics: storageMetrics
  }
}

resource appTableLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: settingName
  scope: appTable
  properties: {
    workspaceId: workspaceId
    logs: storageLogs
    metrics: storageMetrics
  }
}

resource deploymentBlobLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: settingName
  scope: deploymentBlob
  properties: {
    workspaceId: workspaceId
    logs: storageLogs
    metrics: storageMetrics
  }
}

// Resource-specific tables (CDBDataPlaneRequests, CDBQueryRuntimeStatistics, CDBControlPlaneRequests)
// rather than AzureDiagnostics. Query text stays obfuscated: the account does not set enableFullTextQuery.
resource cosmosLogs 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
  name: settingName
  scope: cosmos
  properties: {
    workspaceId: workspaceId
    logAnalyticsDestinationType: 'Dedicated'
    logs: [
      { category: 'DataPlaneRequests', enabled: true }
      { category: 'QueryRuntimeStatistics', enabled: true }
      { category: 'ControlPlaneRequests', enabled: true }
    ]
  }
}

// The host's log (FunctionAppLogs); the app's own telemetry goes to Application Insights.
resource functionAppLogSetting 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = if (functionAppLogs) {
  name: settingName
  scope: functionApp
  properties: {
    workspaceId: workspaceId
    logs: [{ category: 'FunctionAppLogs', enabled: true }]
  }
}
