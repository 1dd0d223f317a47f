// The Durable Task Scheduler (managed Durable Functions backend) and the app's task hub, for deployments that
// outgrow the Azure Storage backend. The app's identity is a Durable Task Data Contributor on the task hub;
// function-app.bicep switches host.json's storage provider to azureManaged with the same switch.
param name string
param location string
param tags object
@allowed(['Consumption', 'Dedicated'])
param sku string = 'Consumption'
param taskHubName string
param principalId string
param operatorPrincipalId string = ''
param operatorPrincipalType string = 'User'

var durableTaskDataContributor = '0ad04412-c4d5-4796-b79c-f76d14c8d402'

resource scheduler 'Microsoft.DurableTask/schedulers@2025-11-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    sku: sku == 'Dedicated' ? { name: 'Dedicated', capacity: 1 } : { name: 'Consumption' }
    // An empty list denies every caller; access is by Entra identity and role.
    ipAllowlist: ['0.0.0.0/0']
  }
}

resource taskHub 'Microsoft.DurableTask/schedulers/taskHubs@2025-11-01' = {
  parent: scheduler
  name: taskHubName
  properties: {}
}

resource appRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(taskHub.id, principalId, durableTaskDataContributor)
  scope: taskHub
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', durableTaskDataContributor)
    principalId: principalId
    principalType: 'ServicePrincipal'
  }
}

// The operator sees the scheduler's dashboard.
resource operatorRole 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(operatorPrincipalId)) {
  name: guid(taskHub.id, operatorPrincipalId, durableTaskDataContributor)
  scope: taskHub
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', durableTaskDataContributor)
    principalId: operatorPrincipalId
    principalType: operatorPrincipalType
  }
}

output endpoint string = scheduler.properties.endpoint
output taskHubName string = taskHub.name
