// Firebreak on Azure: one Function App (Flex Consumption, Python 3.11 or 3.13) with everything it reads and writes.
// Deploy into a resource group:
//   az deployment group create -g <rg> -f infra/main.bicep -p infra/params/prod.parameters.json
// or `azd up` (azure.yaml; infra/main.parameters.json maps azd's environment onto these parameters).
// Every data-plane call the app makes uses its user-assigned managed identity; account keys are off.
targetScope = 'resourceGroup'

@minLength(2)
@maxLength(16)
@description('Short name of this deployment (dev, prod, ...): it goes into every resource name, lower-cased, with `_` and `.` as `-` and `(` `)` dropped (what azd accepts in an environment name).')
param environmentName string

// The regions Flex Consumption is offered in, as Azure-Samples/remote-mcp-functions-python lists them (infra/main.bicep,
// 2026-11-27). The list grows: check `az functionapp list-flexconsumption-locations -o table` and add a region here
// (azd offers only these when it asks for a location).
@allowed([
  'australiaeast'
  'australiasoutheast'
  'brazilsouth'
  'canadacentral'
  'centralindia'
  'centralus'
  'eastasia'
  'eastus'
  'eastus2'
  'francecentral'
  'germanywestcentral'
  'italynorth'
  'japaneast'
  'koreacentral'
  'northcentralus'
  'northeurope'
  'norwayeast'
  'southafricanorth'
  'southcentralus'
  'southeastasia'
  'southindia'
  'spaincentral'
  'swedencentral'
  'uaenorth'
  'uksouth'
  'ukwest'
  'westcentralus'
  'westeurope'
  'westus'
  'westus2'
  'westus3'
])
@description('Region of every resource: one where the Flex Consumption plan is offered.')
param location string = resourceGroup().location

@description('Tags on every resource.')
param tags object = {}

// ---- Function App ---------------------------------------------------------------------------------
@allowed([512, 2048, 4096])
@description('Memory of each Flex Consumption instance, in MB (the perf parsers want 2048 for large artifacts).')
param instanceMemoryMB int = 2048

// 40 is the lowest maximum Flex Consumption accepts (learn.microsoft.com/azure/azure-functions/event-driven-scaling,
// "Flex Consumption plan"); a lower value is refused when the app is created.
@minValue(40)
@maxValue(1000)
@description('Most instances the app scales out to, per function group (also caps what one burst of requests can cost). At least 40.')
param maximumInstanceCount int = 40

@minValue(0)
@description('Always-ready instances for the HTTP group (0 = scale to zero; 1 removes cold starts at a price).')
param alwaysReadyHttpInstances int = 0

@minValue(0)
@description('Always-ready instances for the Durable group (orchestrations and activities; Microsoft\'s guidance for the Azure Storage backend on Flex: 1 in production).')
param alwaysReadyDurableInstances int = 0

@allowed(['3.11', '3.13'])
@description('Python of the Flex Consumption runtime.')
param pythonVersion string = '3.11'

@description('Host and worker telemetry as OpenTelemetry (preview on Flex; HTTP triggers only so far). The app configures the Azure Monitor distro itself when Application Insights is set.')
param openTelemetryEnabled bool = false

@minValue(1)
@maxValue(1000)
@description('HTTP requests one instance serves at once before the platform adds an instance.')
param httpPerInstanceConcurrency int = 16

@description('Zone-redundant Flex Consumption plan (only in regions that offer it). Choose it with storageSku Standard_ZRS/GZRS and cosmosZoneRedundant.')
param zoneRedundant bool = false

@allowed(['Standard_LRS', 'Standard_ZRS', 'Standard_GRS', 'Standard_GZRS'])
@description('Replication of the Storage account (Blob artifacts and the Durable task hub).')
param storageSku string = 'Standard_LRS'

@description('Origins the mobile app and browser clients call from (CORS and the MCP Origin check), e.g. https://app.example.com.')
param corsAllowedOrigins array = []

@description('Extra Host header values the app answers (custom domain, Front Door, APIM); its own host name is always allowed.')
param allowedHosts array = []

@description('Application log level of the app\'s own loggers.')
@allowed(['DEBUG', 'INFO', 'WARNING', 'ERROR'])
param logLevel string = 'INFO'

@description('Commit the code comes from (health.check reports it).')
param buildCommit string = 'unknown'

@description('Non-secret app settings to add or override (FIREBREAK_* names, see README "Settings"). Secrets go in the secure parameters below.')
param appSettings object = {}

// ---- Durable Functions backend --------------------------------------------------------------------
@allowed(['azureStorage', 'durableTaskScheduler'])
@description('Durable Functions backend: the Storage account (default) or the Durable Task Scheduler (managed, for deployments that outgrow it).')
param durableBackend string = 'azureStorage'

@allowed(['Consumption', 'Dedicated'])
@description('Durable Task Scheduler SKU (only with durableBackend = durableTaskScheduler).')
param durableTaskSchedulerSku string = 'Consumption'

@description('Durable task hub name (letters and digits, starting with a letter).')
@minLength(3)
@maxLength(45)
param taskHubName string = 'firebreak'

// ---- Cosmos DB ------------------------------------------------------------------------------------
@description('Serverless Cosmos DB (pay per request). false = provisioned autoscale throughput on the database.')
param cosmosServerless bool = true

@minValue(1000)
@description('Autoscale maximum RU/s of the database when cosmosServerless is false.')
param cosmosAutoscaleMaxThroughput int = 1000

@description('Zone-redundant Cosmos DB account in its region (isZoneRedundant; only in regions with availability zones, and fixed once the account exists).')
param cosmosZoneRedundant bool = false

// ---- Key Vault ------------------------------------------------------------------------------------
@description('Key Vault purge protection. true (prod): a deleted vault and its secrets cannot be purged for 90 days, and once on it cannot be turned off. false (dev): `azd down --purge` then `azd up` can reuse the name. Soft delete stays on either way.')
param keyVaultPurgeProtection bool = true

// ---- Identity -------------------------------------------------------------------------------------
@description('App Service authentication (Easy Auth) with Entra ID in front of the app; needs entraClientId (without it Easy Auth stays off). Off (recommended: it would refuse workspace API keys on /api/mcp and replace the app\'s 401 envelope and MCP challenge): the app validates Entra tokens and API keys itself; app routes are anonymous at the host.')
param easyAuthEnabled bool = false

@description('With Easy Auth: client (application) ids whose tokens it admits (MCP clients, the phone app). Empty: only the app\'s own registration.')
param easyAuthAllowedClientApplications array = []

@description('With Easy Auth: object ids of the users, service principals or managed identities it admits. Empty (and no groups): any signed-in principal of an admitted client.')
param easyAuthAllowedPrincipals array = []

@description('With Easy Auth: object ids of the groups it admits (the token must carry the groups claim).')
param easyAuthAllowedGroups array = []

@description('With Easy Auth: scopes its Protected Resource Metadata names. Empty: <identifier URI>/user_impersonation (the created registration\'s URI, else api://<entraClientId>).')
param easyAuthScopes array = []

@description('Entra ID application (client) id of the app registration: the token audience (Easy Auth and the app\'s own validation).')
param entraClientId string = ''

@description('Entra ID tenant of the app registration (defaults to this subscription\'s tenant).')
param entraTenantId string = tenant().tenantId

@description('Object id of a user or group that may read and write the app\'s data plane for operations (mint API keys, inspect data). Empty: none.')
param operatorPrincipalId string = ''

@allowed(['User', 'Group', 'ServicePrincipal'])
@description('Kind of operatorPrincipalId (azd sets AZURE_PRINCIPAL_TYPE: User, or ServicePrincipal when signed in as one).')
param operatorPrincipalType string = 'User'

// ---- Network, logs, app registration --------------------------------------------------------------
@description('Private network: a VNet with the app\'s integration subnet, private endpoints for Storage, Cosmos DB and Key Vault, and public network access off on them. Deploy and operate (make api-key, the data plane) from inside the network then.')
param vnetEnabled bool = false

@description('Create the MCP server\'s Entra app registration with the deployment (Microsoft Graph Bicep extension; the deployer needs Graph rights, e.g. Application Developer). Its client id then replaces entraClientId.')
param createEntraApp bool = false

@description('Send the Functions host\'s FunctionAppLogs to Log Analytics with a diagnostic setting (set false if the Flex Consumption plan refuses it; Application Insights keeps the host logs either way).')
param functionAppDiagnosticsEnabled bool = true

@description('Client ids of MCP clients: with createEntraApp pre-authorised for user_impersonation (modules/entra-app.bicep names the well-known ones); always admitted by Easy Auth and the app with easyAuthAllowedClientApplications (FIREBREAK_ENTRA_ALLOWED_CLIENT_IDS).')
param entraPreAuthorizedClientIds array = []

// ---- Secrets (kept in Key Vault; the app reads them as Key Vault references) -----------------------
@secure()
@description('Base64 of 32 random bytes (`openssl rand -base64 32`): seals run secrets at rest. Empty: runs that need sealing answer NOT_CONFIGURED.')
param runSecretsKey string = ''

@secure()
@description('NeuBird password (with FIREBREAK_NEUBIRD_BASE_URL and _EMAIL in appSettings). Empty: the NeuBird tools answer NOT_CONFIGURED.')
param neubirdPassword string = ''

@secure()
@description('API key of the LLM endpoint. Empty with an Azure OpenAI endpoint: the managed identity is used (grant it Cognitive Services OpenAI User).')
param llmApiKey string = ''

@secure()
@description('GitHub token for private runbooks, sent only for the repositories in FIREBREAK_INVESTIGATIONS_GITHUB_REPOS (appSettings). Empty: public runbooks only.')
param githubToken string = ''

@secure()
@description('Access key id for s3:// runbooks (with FIREBREAK_INVESTIGATIONS_S3_ENDPOINT_URL in appSettings). Empty: s3:// runbooks are refused.')
param s3AccessKeyId string = ''

@secure()
@description('Secret access key for s3:// runbooks. Empty: s3:// runbooks are refused.')
param s3SecretAccessKey string = ''

@secure()
@description('MCP servers the investigations may call (FIREBREAK_INVESTIGATIONS_MCP_SERVERS; may hold auth headers). Empty: none.')
param investigationsMcpServers string = ''

// The token comes from environmentName as given (so 'Prod' and 'prod' stay apart); the names use `env`, the one
// form every resource type accepts: lower case letters, digits and hyphens. Each name is cut to its type's limit
// (learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules) and ends with the token, so
// a cut never merges two environments. A short lower-case environmentName gives the same names as before.
var token = toLower(uniqueString(subscription().id, resourceGroup().id, environmentName))
var env = toLower(replace(replace(replace(replace(environmentName, '_', '-'), '.', '-'), '(', ''), ')', ''))
// Storage (lower case letters and digits) and Key Vault (no `--`, ends with a letter or digit): no hyphens.
var envAlnum = replace(env, '-', '')
var names = {
  identity: 'id-firebreak-${take(env, 16)}-${token}' // 3-128
  logAnalytics: 'log-firebreak-${take(env, 16)}-${token}' // 4-63
  appInsights: 'appi-firebreak-${take(env, 16)}-${token}' // 1-260
  storage: take('stfb${token}${envAlnum}', 24) // 3-24, globally unique
  cosmos: 'cosmos-firebreak-${take(env, 13)}-${token}' // 3-44, globally unique
  keyVault: empty(envAlnum) ? 'kv-${token}' : take('kv-${token}-${envAlnum}', 24) // 3-24, globally unique
  plan: 'plan-firebreak-${take(env, 16)}-${token}' // 1-60
  functionApp: 'func-firebreak-${take(env, 16)}-${token}' // 2-60, globally unique (host name)
  scheduler: 'dts-firebreak-${take(env, 16)}-${token}' // 3-64
  // The deployment package's own identity and account (only they can write the code the app runs).
  deploymentIdentity: 'id-firebreak-${take(env, 16)}-${token}-deploy' // 3-128
  deploymentStorage: '${take('stfb${token}${envAlnum}', 21)}pkg' // 3-24, globally unique, never the app's
  vnet: 'vnet-firebreak-${take(env, 16)}-${token}' // 2-64
}
var deploymentContainerName = 'app-package-${take(token, 12)}'
// The app's Blob container (FIREBREAK_BLOB_CONTAINER): artifacts, reports and large payloads.
var appBlobContainerName = 'firebreak'
// Containers, partition keys, indexing and TTL as the app declares them (generated by `make manifest` from
// shared/storage/containers.py declarations; tests/infra checks it is current).
var app = loadJsonContent('generated/app.json')

module identity 'modules/identity.bicep' = {
  name: 'identity'
  params: {
    name: names.identity
    location: location
    tags: tags
  }
}

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  params: {
    logAnalyticsName: names.logAnalytics
    appInsightsName: names.appInsights
    location: location
    tags: tags
    principalId: identity.outputs.principalId
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  params: {
    name: names.storage
    location: location
    tags: tags
    // The package container is in deploymentStorage (its own account: see that module below).
    containerNames: [appBlobContainerName]
    sku: storageSku
    principalId: identity.outputs.principalId
    operatorPrincipalId: operatorPrincipalId
    operatorPrincipalType: operatorPrincipalType
    publicNetworkAccess: vnetEnabled ? 'Disabled' : 'Enabled'
  }
}

module cosmos 'modules/cosmos.bicep' = {
  name: 'cosmos'
  params: {
    name: names.cosmos
    location: location
    tags: tags
    zoneRedundant: cosmosZoneRedundant
    databaseName: app.cosmosDatabase
    containers: app.containers
    serverless: cosmosServerless
    autoscaleMaxThroughput: cosmosAutoscaleMaxThroughput
    principalId: identity.outputs.principalId
    operatorPrincipalId: operatorPrincipalId
    publicNetworkAccess: vnetEnabled ? 'Disabled' : 'Enabled'
  }
}

// The secrets that were given: each becomes a Key Vault secret and its app setting a Key Vault reference.
// (union, not concat: the names differ, and checkov's bicep parser reads only a multi-line union.)
var secretEntries = union(
  empty(runSecretsKey) ? [] : [{ name: 'run-secrets-key', value: runSecretsKey }],
  empty(neubirdPassword) ? [] : [{ name: 'neubird-password', value: neubirdPassword }],
  empty(llmApiKey) ? [] : [{ name: 'llm-api-key', value: llmApiKey }],
  empty(githubToken) ? [] : [{ name: 'github-token', value: githubToken }],
  empty(s3AccessKeyId) ? [] : [{ name: 's3-access-key-id', value: s3AccessKeyId }],
  empty(s3SecretAccessKey) ? [] : [{ name: 's3-secret-access-key', value: s3SecretAccessKey }],
  empty(investigationsMcpServers) ? [] : [{ name: 'investigations-mcp-servers', value: investigationsMcpServers }]
)

// The secret settings given on this deployment: function-app.bicep writes their references (and keeps the ones
// an earlier deployment wrote).
var givenSecretSettings = union(
  empty(runSecretsKey) ? {} : { FIREBREAK_SECRETS_KEY: true },
  empty(neubirdPassword) ? {} : { FIREBREAK_NEUBIRD_PASSWORD: true },
  empty(llmApiKey) ? {} : { FIREBREAK_LLM_API_KEY: true },
  empty(githubToken) ? {} : { FIREBREAK_INVESTIGATIONS_GITHUB_TOKEN: true },
  empty(s3AccessKeyId) ? {} : { FIREBREAK_INVESTIGATIONS_S3_ACCESS_KEY_ID: true },
  empty(s3SecretAccessKey) ? {} : { FIREBREAK_INVESTIGATIONS_S3_SECRET_ACCESS_KEY: true },
  empty(investigationsMcpServers) ? {} : { FIREBREAK_INVESTIGATIONS_MCP_SERVERS: true }
)

module keyVault 'modules/keyvault.bicep' = {
  name: 'keyvault'
  params: {
    name: names.keyVault
    location: location
    tags: tags
    principalId: identity.outputs.principalId
    purgeProtection: keyVaultPurgeProtection
    secrets: { entries: secretEntries }
    publicNetworkAccess: vnetEnabled ? 'Disabled' : 'Enabled'
  }
}

module scheduler 'modules/durable-task-scheduler.bicep' = if (durableBackend == 'durableTaskScheduler') {
  name: 'durable-task-scheduler'
  params: {
    name: names.scheduler
    location: location
    tags: tags
    sku: durableTaskSchedulerSku
    taskHubName: taskHubName
    principalId: identity.outputs.principalId
    operatorPrincipalId: operatorPrincipalId
    operatorPrincipalType: operatorPrincipalType
  }
}

module functionApp 'modules/function-app.bicep' = {
  name: 'function-app'
  params: {
    planName: names.plan
    name: names.functionApp
    location: location
    tags: tags
    identityId: identity.outputs.id
    identityClientId: identity.outputs.clientId
    storageAccountName: storage.outputs.name
    blobEndpoint: storage.outputs.blobEndpoint
    deploymentContainerName: deploymentContainerName
    appBlobContainerName: appBlobContainerName
    appInsightsConnectionString: monitoring.outputs.connectionString
    cosmosEndpoint: cosmos.outputs.endpoint
    cosmosDatabase: app.cosmosDatabase
    // Every secret setting is a reference to this vault, given or not (function-app.bicep says why).
    keyVaultName: keyVault.outputs.name
    givenSecretSettings: givenSecretSettings
    instanceMemoryMB: instanceMemoryMB
    maximumInstanceCount: maximumInstanceCount
    alwaysReadyHttpInstances: alwaysReadyHttpInstances
    alwaysReadyDurableInstances: alwaysReadyDurableInstances
    pythonVersion: pythonVersion
    openTelemetryEnabled: openTelemetryEnabled
    zoneRedundant: zoneRedundant
    httpPerInstanceConcurrency: httpPerInstanceConcurrency
    corsAllowedOrigins: corsAllowedOrigins
    allowedHosts: allowedHosts
    logLevel: logLevel
    buildCommit: buildCommit
    appSettings: appSettings
    taskHubName: taskHubName
    durableBackend: durableBackend
    schedulerEndpoint: durableBackend == 'durableTaskScheduler' ? scheduler.outputs.endpoint : ''
    easyAuthEnabled: easyAuthEnabled
    easyAuthAllowedClientApplications: easyAuthAllowedClientApplications
    easyAuthAllowedPrincipals: easyAuthAllowedPrincipals
    easyAuthAllowedGroups: easyAuthAllowedGroups
    easyAuthScopes: easyAuthScopes
    entraClientId: createEntraApp ? entraApp.outputs.clientId : entraClientId
    entraIdentifierUri: createEntraApp ? entraApp.outputs.identifierUri : ''
    entraPreAuthorizedClientIds: entraPreAuthorizedClientIds
    entraTenantId: entraTenantId
    deploymentIdentityId: deploymentIdentity.outputs.id
    deploymentBlobEndpoint: deploymentStorage.outputs.blobEndpoint
    virtualNetworkSubnetId: vnetEnabled ? network.outputs.appSubnetId : ''
  }
}

// ---- Deployment package isolation, diagnostics, private network, app registration ------------------------

// The identity the platform writes and reads the deployment package with; the app's code uses `identity`.
module deploymentIdentity 'modules/identity.bicep' = {
  name: 'deployment-identity'
  params: {
    name: names.deploymentIdentity
    location: location
    tags: tags
  }
}

module deploymentStorage 'modules/deployment-storage.bicep' = {
  name: 'deployment-storage'
  params: {
    name: names.deploymentStorage
    location: location
    tags: tags
    containerName: deploymentContainerName
    sku: storageSku
    principalId: deploymentIdentity.outputs.principalId
    operatorPrincipalId: operatorPrincipalId
    operatorPrincipalType: operatorPrincipalType
    publicNetworkAccess: vnetEnabled ? 'Disabled' : 'Enabled'
  }
}

module network 'modules/network.bicep' = if (vnetEnabled) {
  name: 'network'
  params: {
    name: names.vnet
    location: location
    tags: tags
    storageAccountId: storage.outputs.id
    deploymentStorageAccountId: deploymentStorage.outputs.id
    cosmosAccountId: resourceId('Microsoft.DocumentDB/databaseAccounts', cosmos.outputs.name)
    keyVaultId: resourceId('Microsoft.KeyVault/vaults', keyVault.outputs.name)
  }
}

module diagnostics 'modules/diagnostics.bicep' = {
  name: 'diagnostics'
  params: {
    workspaceId: monitoring.outputs.logAnalyticsId
    keyVaultName: keyVault.outputs.name
    storageAccountName: storage.outputs.name
    deploymentStorageAccountName: deploymentStorage.outputs.name
    cosmosAccountName: cosmos.outputs.name
    functionAppName: functionApp.outputs.name
    functionAppLogs: functionAppDiagnosticsEnabled
  }
}

module entraApp 'modules/entra-app.bicep' = if (createEntraApp) {
  name: 'entra-app'
  params: {
    appUniqueName: 'firebreak-mcp-${env}-${token}'
    displayName: 'Firebreak MCP (${env})'
    managedIdentityPrincipalId: identity.outputs.principalId
    preAuthorizedClientIds: entraPreAuthorizedClientIds
  }
}

@description('The Entra application (client) id MCP clients request tokens for (created, or entraClientId).')
output entraAppClientId string = createEntraApp ? entraApp.outputs.clientId : entraClientId
@description('With createEntraApp: the registration\'s identifier URI; clients request `<uri>/user_impersonation`.')
output entraAppIdentifierUri string = createEntraApp ? entraApp.outputs.identifierUri : ''
@description('The storage account holding the deployment package: written by the deployment identity and the operator, separate from the identity the app\'s SDKs use; not unreachable from code running in the app (the managed identity endpoint hands out any identity attached to the site). Versioned; StorageWrite logs show who wrote it.')
output deploymentStorageAccountName string = deploymentStorage.outputs.name


@description('The Function App\'s base URL.')
output functionAppUrl string = functionApp.outputs.url
@description('The MCP endpoint (Streamable HTTP): callers send an Entra token or a workspace API key as a bearer token; no function key.')
output mcpEndpointUrl string = '${functionApp.outputs.url}/api/mcp'
@description('The Cosmos DB endpoint (FIREBREAK_COSMOS_ENDPOINT for `make api-key` against this deployment).')
output cosmosEndpoint string = cosmos.outputs.endpoint
@description('The Function App\'s name (for `func azure functionapp publish` and `az functionapp keys list`).')
output functionAppName string = functionApp.outputs.name
@description('The Key Vault holding the app\'s secrets.')
output keyVaultName string = keyVault.outputs.name
@description('The Storage account (Blob and the Durable task hub).')
output storageAccountName string = storage.outputs.name
