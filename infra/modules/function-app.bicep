// The Function App on the Flex Consumption plan (Linux, Python 3.11) and its app settings. The host and the
// app reach Storage, Cosmos DB, Key Vault, Application Insights and (optionally) the Durable Task Scheduler
// with the user-assigned identity: no connection string with a key is ever an app setting.
param planName string
param name string
param location string
param tags object
param identityId string
param identityClientId string
param storageAccountName string
param blobEndpoint string
param deploymentContainerName string
param appBlobContainerName string
param appInsightsConnectionString string
param cosmosEndpoint string
param cosmosDatabase string
@description('App setting name -> Key Vault reference (keyvault.bicep\'s output).')
param secretSettings object
@allowed([512, 2048, 4096])
param instanceMemoryMB int = 2048
param maximumInstanceCount int = 40
param alwaysReadyHttpInstances int = 0
@description('HTTP requests one instance handles at once (the handlers are async; Flex\'s default for 2048 MB is 16).')
param httpPerInstanceConcurrency int = 16
@description('Zone-redundant plan (only in regions where Flex Consumption offers it).')
param zoneRedundant bool = false
param corsAllowedOrigins array = []
param allowedHosts array = []
param logLevel string = 'INFO'
param buildCommit string = 'unknown'
param appSettings object = {}
param taskHubName string
@allowed(['azureStorage', 'durableTaskScheduler'])
param durableBackend string = 'azureStorage'
param schedulerEndpoint string = ''
param easyAuthEnabled bool = false
param entraClientId string = ''
param entraTenantId string = ''
// ---- issue #30 (infra-network): the deployment package's own account and identity, VNet integration ----
@description('Resource id of the deployment identity: the only one with a role on the package container (deployment-storage.bicep).')
param deploymentIdentityId string
@description('Blob endpoint of the deployment storage account (the package is not in the app\'s account).')
param deploymentBlobEndpoint string
@description('The app subnet (network.bicep) with vnetEnabled; empty: no VNet integration.')
param virtualNetworkSubnetId string = ''

var useScheduler = durableBackend == 'durableTaskScheduler'
// Easy Auth needs the app registration: without a client id it stays off, and with it off the app never
// trusts X-MS-CLIENT-PRINCIPAL headers (anyone could send them).
var easyAuthOn = easyAuthEnabled && !empty(entraClientId)
var entraIssuer = '${environment().authentication.loginEndpoint}${entraTenantId}/v2.0'

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: { name: 'FC1', tier: 'FlexConsumption' }
  properties: { reserved: true, zoneRedundant: zoneRedundant }
}

resource site 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': 'api' })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    // The deployment identity must be assigned for the platform to use it (functionAppConfig below).
    userAssignedIdentities: { '${identityId}': {}, '${deploymentIdentityId}': {} }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    clientCertEnabled: false
    keyVaultReferenceIdentity: identityId
    virtualNetworkSubnetId: empty(virtualNetworkSubnetId) ? null : virtualNetworkSubnetId
    // Key Vault references through a private endpoint: Linux apps must route all outbound traffic through the
    // VNet (learn.microsoft.com/azure/app-service/app-service-key-vault-references#access-network-restricted-vaults).
    // A site property: the platform refuses siteConfig.vnetRouteAllEnabled ("modify the Site.VnetRouteAllEnabled property").
    vnetRouteAllEnabled: !empty(virtualNetworkSubnetId)
    siteConfig: {
      minTlsVersion: '1.2'
      scmMinTlsVersion: '1.2'
      ftpsState: 'Disabled'
      http20Enabled: true
      cors: {
        allowedOrigins: corsAllowedOrigins
        supportCredentials: false
      }
    }
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${deploymentBlobEndpoint}${deploymentContainerName}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: deploymentIdentityId
          }
        }
      }
      scaleAndConcurrency: {
        instanceMemoryMB: instanceMemoryMB
        maximumInstanceCount: maximumInstanceCount
        alwaysReady: alwaysReadyHttpInstances > 0 ? [{ name: 'http', instanceCount: alwaysReadyHttpInstances }] : []
        triggers: { http: { perInstanceConcurrency: httpPerInstanceConcurrency } }
      }
      runtime: { name: 'python', version: '3.11' }
    }
  }
}

// Settings a deployment may change through `appSettings` (the README's Settings table lists the rest).
var defaults = {
  FIREBREAK_LOG_LEVEL: logLevel
  FIREBREAK_BUILD_COMMIT: buildCommit
  FIREBREAK_MCP_ALLOWED_HOSTS: join(allowedHosts, ',')
  FIREBREAK_MCP_ALLOWED_ORIGINS: join(corsAllowedOrigins, ',')
}

var identitySettings = {
  // The host's storage (Durable task hub on the Azure Storage backend, timers, leases): identity-based.
  AzureWebJobsStorage__accountName: storageAccountName
  AzureWebJobsStorage__credential: 'managedidentity'
  AzureWebJobsStorage__clientId: identityClientId
  // DefaultAzureCredential (Cosmos, Blob, Azure OpenAI) picks the user-assigned identity by this id.
  AZURE_CLIENT_ID: identityClientId
  APPLICATIONINSIGHTS_CONNECTION_STRING: appInsightsConnectionString
  APPLICATIONINSIGHTS_AUTHENTICATION_STRING: 'ClientId=${identityClientId};Authorization=AAD'
  FIREBREAK_ENVIRONMENT: 'azure'
  FIREBREAK_DEV_MODE: 'false'
  FIREBREAK_CREATE_RESOURCES: 'false'
  FIREBREAK_COSMOS_ENDPOINT: cosmosEndpoint
  FIREBREAK_COSMOS_DATABASE: cosmosDatabase
  FIREBREAK_BLOB_ACCOUNT_URL: blobEndpoint
  FIREBREAK_BLOB_CONTAINER: appBlobContainerName
  // host.json: "hubName": "%FIREBREAK_TASK_HUB%".
  FIREBREAK_TASK_HUB: taskHubName
  // Only behind Easy Auth may the app believe X-MS-CLIENT-PRINCIPAL headers.
  FIREBREAK_TRUST_APPSERVICE_AUTH: easyAuthOn ? 'true' : 'false'
}

var entraSettings = empty(entraClientId) ? {} : {
  FIREBREAK_ENTRA_TENANT_ID: entraTenantId
  FIREBREAK_ENTRA_AUDIENCE: entraClientId
}

// The Durable Task Scheduler: host.json's storage provider is switched by the host's own override settings
// (AzureFunctionsJobHost__<path>), so one package runs on either backend.
var schedulerSettings = useScheduler ? {
  AzureFunctionsJobHost__extensions__durableTask__storageProvider__type: 'azureManaged'
  AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionStringName: 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING'
  DURABLE_TASK_SCHEDULER_CONNECTION_STRING: 'Endpoint=${schedulerEndpoint};Authentication=ManagedIdentity;ClientID=${identityClientId}'
} : {}

// HTTP streams (azurefunctions-extensions-http-fastapi, functions/http.py) need the worker to index at init on
// Python 3.12 and older (the runtime above is 3.11); 3.13 does it anyway. Without it every HTTP function fails.
var runtimeSettings = {
  PYTHON_ENABLE_INIT_INDEXING: '1'
}

// Settings the deployment owns come last, so `appSettings` cannot turn dev mode on, trust App Service
// headers without Easy Auth in front, or point the app at other stores.
var owned = union(runtimeSettings, identitySettings, entraSettings, schedulerSettings)

resource settings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: union(defaults, appSettings, secretSettings, owned)
}

// Deployments go through Entra ID (az login), never basic publishing credentials.
resource scmBasicAuth 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: site
  name: 'scm'
  properties: { allow: false }
}

resource ftpBasicAuth 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2024-04-01' = {
  parent: site
  name: 'ftp'
  properties: { allow: false }
}

// Easy Auth: Entra ID sign-in in front of every route but /api/health. Unauthenticated requests get 401
// (an API, not a browser app), and the app trusts the principal headers the platform adds.
resource auth 'Microsoft.Web/sites/config@2024-04-01' = if (easyAuthOn) {
  parent: site
  name: 'authsettingsV2'
  properties: {
    platform: { enabled: true }
    globalValidation: {
      requireAuthentication: true
      unauthenticatedClientAction: 'Return401'
      excludedPaths: ['/api/health']
    }
    httpSettings: {
      requireHttps: true
      forwardProxy: { convention: 'NoProxy' }
    }
    identityProviders: {
      azureActiveDirectory: {
        enabled: true
        registration: {
          clientId: entraClientId
          openIdIssuer: entraIssuer
        }
        validation: {
          allowedAudiences: [entraClientId, 'api://${entraClientId}']
        }
      }
    }
    login: {
      tokenStore: { enabled: false }
    }
  }
}

output name string = site.name
output url string = 'https://${site.properties.defaultHostName}'
