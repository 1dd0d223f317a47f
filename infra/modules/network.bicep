// The private network of `vnetEnabled`: a virtual network with the app's integration subnet and a subnet for
// private endpoints, one private endpoint per store the app reaches (Storage blob, queue and table, the
// deployment package's blob, Cosmos DB, Key Vault) and the private DNS zones that resolve their public names
// to those endpoints inside the network. main.bicep turns public network access off on each store with the
// same switch. Modelled on Azure-Samples/remote-mcp-functions-python (infra/app/vnet.bicep and
// storage-PrivateEndpoint.bicep), without its registry modules.
param name string
param location string
param tags object
param storageAccountId string
param deploymentStorageAccountId string
param cosmosAccountId string
param keyVaultId string
param addressPrefix string = '10.0.0.0/16'
@description('The Flex Consumption app\'s subnet: it scales out into it, one address per instance.')
param appSubnetPrefix string = '10.0.1.0/24'
param endpointSubnetPrefix string = '10.0.2.0/24'

// Public-cloud private link zone names (Azure Government and China use others).
var zones = {
  blob: 'privatelink.blob.${environment().suffixes.storage}'
  queue: 'privatelink.queue.${environment().suffixes.storage}'
  table: 'privatelink.table.${environment().suffixes.storage}'
  Sql: 'privatelink.documents.azure.com'
  vault: 'privatelink.vaultcore.azure.net'
}

// group: the private link sub-resource (groupIds), which is also the zone it registers in.
var endpoints = [
  { name: 'storage-blob', target: storageAccountId, group: 'blob' }
  { name: 'storage-queue', target: storageAccountId, group: 'queue' }
  { name: 'storage-table', target: storageAccountId, group: 'table' }
  { name: 'deployment-blob', target: deploymentStorageAccountId, group: 'blob' }
  { name: 'cosmos-sql', target: cosmosAccountId, group: 'Sql' }
  { name: 'keyvault', target: keyVaultId, group: 'vault' }
]

resource vnet 'Microsoft.Network/virtualNetworks@2023-11-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    addressSpace: { addressPrefixes: [addressPrefix] }
    subnets: [
      {
        name: 'app'
        properties: {
          addressPrefix: appSubnetPrefix
          // Flex Consumption's VNet integration needs this delegation (and the Microsoft.App resource
          // provider registered): learn.microsoft.com/azure/azure-functions/flex-consumption-plan.
          delegations: [
            { name: 'flex-consumption', properties: { serviceName: 'Microsoft.App/environments' } }
          ]
          // All outbound traffic of the app leaves here, to Entra, NeuBird, the LLM, GitHub, MCP servers, App
          // Insights and the Durable Task Scheduler. Newer Microsoft.Network API versions make subnets private by
          // default (learn.microsoft.com/azure/virtual-network/ip-services/default-outbound-access): explicit here.
          // A NAT gateway (a stable egress IP) is the production option; not built here.
          defaultOutboundAccess: true
        }
      }
      {
        name: 'private-endpoints'
        properties: {
          addressPrefix: endpointSubnetPrefix
          privateEndpointNetworkPolicies: 'Disabled'
        }
      }
    ]
  }
}

resource dnsZones 'Microsoft.Network/privateDnsZones@2020-06-01' = [
  for zone in items(zones): {
    name: zone.value
    location: 'global'
    tags: tags
  }
]

// (Child names spelled out rather than `parent: dnsZones[i]`: checkov's bicep parser reads no indexed loop.)
resource dnsLinks 'Microsoft.Network/privateDnsZones/virtualNetworkLinks@2020-06-01' = [
  for zone in items(zones): {
    name: '${zone.value}/link-${name}'
    location: 'global'
    tags: tags
    properties: {
      registrationEnabled: false
      virtualNetwork: { id: vnet.id }
    }
    dependsOn: [dnsZones]
  }
]

resource privateEndpoints 'Microsoft.Network/privateEndpoints@2023-11-01' = [
  for endpoint in endpoints: {
    name: 'pe-${name}-${endpoint.name}'
    location: location
    tags: tags
    properties: {
      subnet: { id: '${vnet.id}/subnets/private-endpoints' }
      privateLinkServiceConnections: [
        {
          name: endpoint.name
          properties: {
            privateLinkServiceId: endpoint.target
            groupIds: [endpoint.group]
          }
        }
      ]
    }
  }
]

resource dnsZoneGroups 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups@2023-11-01' = [
  for endpoint in endpoints: {
    name: 'pe-${name}-${endpoint.name}/default'
    properties: {
      privateDnsZoneConfigs: [
        {
          name: endpoint.group
          properties: { privateDnsZoneId: resourceId('Microsoft.Network/privateDnsZones', zones[endpoint.group]) }
        }
      ]
    }
    dependsOn: [privateEndpoints, dnsZones]
  }
]

output appSubnetId string = '${vnet.id}/subnets/app'
output id string = vnet.id
