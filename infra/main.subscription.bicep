// Firebreak at subscription scope: creates the resource group, then deploys main.bicep into it with every parameter
// passed through unchanged (tests/infra/test_main_template.py checks the list). azd uses this template (azure.yaml):
// azd's default scope is the subscription; resource group scope is a beta feature of azd.
//   az deployment sub what-if -l <region> -f infra/main.subscription.bicep -p infra/params/prod.parameters.json location=<region>
// The parameters below mirror main.bicep's (decorators included); main.bicep documents the reasons.
targetScope = 'subscription'

@description('Resource group to create or update. Empty: rg-firebreak-<environmentName>.')
param resourceGroupName string = ''

@minLength(2)
@maxLength(16)
@description('Short name of this deployment (dev, prod, ...): it goes into every resource name, lower-cased, with `_` and `.` as `-` and `(` `)` dropped (what azd accepts in an environment name).')
param environmentName string

@description('Region of the resource group and every resource: one where the Flex Consumption plan is offered (main.bicep keeps the list).')
@metadata({ azd: { type: 'location' } })
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
param location string

@description('Tags on every resource.')
param tags object = {}

// ---- Function App ---------------------------------------------------------------------------------
@allowed([512, 2048, 4096])
@description('Memory of each Flex Consumption instance, in MB (the perf parsers want 2048 for large artifacts).')
param instanceMemoryMB int = 2048

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

var groupName = empty(resourceGroupName) ? 'rg-firebreak-${replace(environmentName, '.', '-')}' : resourceGroupName

// azd finds the environment's group by the azd-env-name tag (and by the AZURE_RESOURCE_GROUP output below).
resource group 'Microsoft.Resources/resourceGroups@2024-03-01' = {
  name: groupName
  location: location
  tags: union(tags, { 'azd-env-name': environmentName })
}

module app 'main.bicep' = {
  name: 'firebreak-app'
  scope: group
  params: {
    environmentName: environmentName
    location: location
    tags: tags
    instanceMemoryMB: instanceMemoryMB
    maximumInstanceCount: maximumInstanceCount
    alwaysReadyHttpInstances: alwaysReadyHttpInstances
    alwaysReadyDurableInstances: alwaysReadyDurableInstances
    pythonVersion: pythonVersion
    openTelemetryEnabled: openTelemetryEnabled
    httpPerInstanceConcurrency: httpPerInstanceConcurrency
    zoneRedundant: zoneRedundant
    storageSku: storageSku
    corsAllowedOrigins: corsAllowedOrigins
    allowedHosts: allowedHosts
    logLevel: logLevel
    buildCommit: buildCommit
    appSettings: appSettings
    durableBackend: durableBackend
    durableTaskSchedulerSku: durableTaskSchedulerSku
    taskHubName: taskHubName
    cosmosServerless: cosmosServerless
    cosmosAutoscaleMaxThroughput: cosmosAutoscaleMaxThroughput
    cosmosZoneRedundant: cosmosZoneRedundant
    keyVaultPurgeProtection: keyVaultPurgeProtection
    easyAuthEnabled: easyAuthEnabled
    vnetEnabled: vnetEnabled
    createEntraApp: createEntraApp
    functionAppDiagnosticsEnabled: functionAppDiagnosticsEnabled
    entraPreAuthorizedClientIds: entraPreAuthorizedClientIds
    easyAuthAllowedClientApplications: easyAuthAllowedClientApplications
    easyAuthAllowedPrincipals: easyAuthAllowedPrincipals
    easyAuthAllowedGroups: easyAuthAllowedGroups
    easyAuthScopes: easyAuthScopes
    entraClientId: entraClientId
    entraTenantId: entraTenantId
    operatorPrincipalId: operatorPrincipalId
    operatorPrincipalType: operatorPrincipalType
    runSecretsKey: runSecretsKey
    neubirdPassword: neubirdPassword
    llmApiKey: llmApiKey
    githubToken: githubToken
    s3AccessKeyId: s3AccessKeyId
    s3SecretAccessKey: s3SecretAccessKey
    investigationsMcpServers: investigationsMcpServers
  }
}

@description('The resource group the app is in (azd stores it as its environment\'s AZURE_RESOURCE_GROUP).')
output AZURE_RESOURCE_GROUP string = group.name
@description('The Function App\'s base URL.')
output functionAppUrl string = app.outputs.functionAppUrl
@description('The MCP endpoint (Streamable HTTP): callers send an Entra token or a workspace API key as a bearer token; no function key.')
output mcpEndpointUrl string = app.outputs.mcpEndpointUrl
@description('The Cosmos DB endpoint (FIREBREAK_COSMOS_ENDPOINT for `make api-key` against this deployment).')
output cosmosEndpoint string = app.outputs.cosmosEndpoint
@description('The Function App\'s name (for `func azure functionapp publish` and `az functionapp keys list`).')
output functionAppName string = app.outputs.functionAppName
@description('The Key Vault holding the app\'s secrets.')
output keyVaultName string = app.outputs.keyVaultName
@description('The Storage account (Blob and the Durable task hub).')
output storageAccountName string = app.outputs.storageAccountName
@description('The Entra application (client) id MCP clients request tokens for (created, or entraClientId).')
output entraAppClientId string = app.outputs.entraAppClientId
@description('With createEntraApp: the registration\'s identifier URI; clients request `<uri>/user_impersonation`.')
output entraAppIdentifierUri string = app.outputs.entraAppIdentifierUri
@description('The storage account holding the deployment package: written by the deployment identity and the operator, separate from the identity the app\'s SDKs use; not unreachable from code running in the app (the managed identity endpoint hands out any identity attached to the site). Versioned; StorageWrite logs show who wrote it.')
output deploymentStorageAccountName string = app.outputs.deploymentStorageAccountName
