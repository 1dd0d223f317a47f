// Log Analytics + workspace-based Application Insights. Local (instrumentation-key) ingestion is off: the app
// sends telemetry with its managed identity, which gets Monitoring Metrics Publisher on the component.
param logAnalyticsName string
param appInsightsName string
param location string
param tags object
param principalId string

@description('Days Log Analytics keeps the app\'s logs.')
param retentionInDays int = 30

var monitoringMetricsPublisher = '3913510d-42f4-4e42-8a64-420c390055eb'

resource logAnalytics 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: { name: 'PerGB2018' }
    retentionInDays: retentionInDays
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: appInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: logAnalytics.id
    DisableLocalAuth: true
  }
}

resource publisher 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(appInsights.id, principalId, monitoringMetricsPublisher)
  scope: appInsights
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', monitoringMetricsPublisher)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

output connectionString string = appInsights.properties.ConnectionString
output id string = appInsights.id
@description('The Log Analytics workspace the diagnostic settings send to (diagnostics.bicep).')
output logAnalyticsId string = logAnalytics.id
