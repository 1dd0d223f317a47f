// The Function App on the Flex Consumption plan (Linux, Python 3.11 or 3.13) and its app settings. The host and the
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
@description('The Key Vault holding the app\'s secrets (keyvault.bicep): every secret setting is a reference to it.')
param keyVaultName string
@description('Secret app settings whose secure parameter was given on this deployment, as { NAME: true } (main.bicep\'s givenSecretSettings).')
param givenSecretSettings object = {}
@allowed([512, 2048, 4096])
param instanceMemoryMB int = 2048
param maximumInstanceCount int = 40
param alwaysReadyHttpInstances int = 0
// Microsoft's guidance for Durable Functions on the Azure Storage provider on Flex: one always-ready instance
// for the `durable` group (orchestrator, activity and entity triggers) in production, so a queued
// orchestration does not wait for a cold start (learn.microsoft.com/azure/azure-functions/durable/
// durable-functions-azure-storage-provider#flex-consumption-plan).
@minValue(0)
@description('Always-ready instances for the Durable group (orchestrations, activities); 1 in production.')
param alwaysReadyDurableInstances int = 0
// The one HTTP concurrency knob on Flex: the platform sends an instance at most this many requests, so host.json's
// http.maxConcurrentRequests/maxOutstandingRequests (100/200) never bound anything and are gone from it.
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
// Easy Auth stays off by default: the app validates Entra tokens itself (shared/identity: issuer, audience,
// scope, allowed clients) and answers workspace API keys, its own 401 envelope and the MCP challenge, all of
// which Easy Auth in front would replace or refuse.
param easyAuthEnabled bool = false
param entraClientId string = ''
param entraTenantId string = ''
// Clients ask for `<identifier URI>/user_impersonation`; Entra resolves the scope against the registration's
// identifierUris, so the URI the app, its PRM and Easy Auth name must be one of them (Azure-Samples/
// remote-mcp-functions-python, infra/app/api.bicep, wires the created registration's identifierUri the same way).
@description('An identifier URI of the app registration (entra-app.bicep\'s output with createEntraApp). Empty: api://<entraClientId>, the default URI of a hand-made registration.')
param entraIdentifierUri string = ''
@description('Client ids pre-authorised on the registration (main.bicep\'s entraPreAuthorizedClientIds): also admitted by Easy Auth and the app.')
param entraPreAuthorizedClientIds array = []
@description('Client (application) ids whose tokens Easy Auth admits (the MCP clients, the phone app). Empty: only the app\'s own registration (an empty list would admit every client in the tenant).')
param easyAuthAllowedClientApplications array = []
@description('Object ids of the users, service principals or managed identities Easy Auth admits. Empty (and no groups): any signed-in principal of an admitted client.')
param easyAuthAllowedPrincipals array = []
@description('Object ids of the groups Easy Auth admits (the token must carry the groups claim).')
param easyAuthAllowedGroups array = []
@description('Scopes Easy Auth\'s Protected Resource Metadata names (preview). Empty: <identifier URI>/user_impersonation, the app\'s default FIREBREAK_ENTRA_SCOPE.')
param easyAuthScopes array = []
@allowed(['3.11', '3.13'])
@description('Python of the Flex Consumption runtime.')
param pythonVersion string = '3.11'
// Preview on Flex Consumption, and only HTTP (not Durable) triggers are covered so far
// (learn.microsoft.com/azure/azure-functions/opentelemetry-howto): an option, off by default.
@description('Host and worker telemetry as OpenTelemetry (host.json telemetryMode by app setting). Needs the app to configure the Azure Monitor distro: with it on, the host stops forwarding the worker\'s logs.')
param openTelemetryEnabled bool = false
// ---- issue #30 (infra-network): the deployment package's own account and identity, VNet integration ----
@description('Resource id of the deployment identity: the only identity with a role on the package container (deployment-storage.bicep).')
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
// One client allow-list for both layers: the clients given for Easy Auth and the pre-authorised ones. Easy Auth
// reads an empty allowedApplications list as any client in the tenant, so without a list it admits only the app
// itself; the app (FIREBREAK_ENTRA_ALLOWED_CLIENT_IDS, shared/identity/entra.py) gets the same list when it has one.
var allowedClientApplications = union(easyAuthAllowedClientApplications, entraPreAuthorizedClientIds)
var easyAuthClientApplications = empty(allowedClientApplications) ? [entraClientId] : allowedClientApplications
var entraResource = empty(entraIdentifierUri) ? 'api://${entraClientId}' : entraIdentifierUri
var easyAuthDefaultScope = '${entraResource}/user_impersonation'
// Easy Auth reads empty principal lists as no restriction or as nobody (unconfirmed): Microsoft's sample sends
// `allowedPrincipals: {}`, so a list goes in only when it has entries.
var allowedPrincipals = union(
  empty(easyAuthAllowedPrincipals) ? {} : { identities: easyAuthAllowedPrincipals },
  empty(easyAuthAllowedGroups) ? {} : { groups: easyAuthAllowedGroups }
)

var alwaysReady = union(
  alwaysReadyHttpInstances > 0 ? [{ name: 'http', instanceCount: alwaysReadyHttpInstances }] : [],
  alwaysReadyDurableInstances > 0 ? [{ name: 'durable', instanceCount: alwaysReadyDurableInstances }] : []
)

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
    // The deployment identity must be assigned for the platform to use it (functionAppConfig below). It is then
    // separate from the identity the SDKs of the app use, but not unreachable from code running in the app: the
    // managed identity endpoint hands out any attached identity (learn.microsoft.com/azure/app-service/
    // overview-managed-identity). Versions and StorageWrite logs on the package account are the mitigation.
    userAssignedIdentities: { '${identityId}': {}, '${deploymentIdentityId}': {} }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    clientCertEnabled: false
    keyVaultReferenceIdentity: identityId
    virtualNetworkSubnetId: empty(virtualNetworkSubnetId) ? null : virtualNetworkSubnetId
    // With a subnet, Flex sends all outbound traffic through the VNet (Key Vault references reach the vault's
    // private endpoint through it and the privatelink zone); vnetRouteAllEnabled is not used on Flex
    // ("Flex Consumption plan deprecations", learn.microsoft.com/azure/azure-functions/functions-app-settings).
    siteConfig: {
      minTlsVersion: '1.2'
      scmMinTlsVersion: '1.2'
      // Flex ignores it (no FTPS on Flex; the ftp basicPublishingCredentialsPolicies below is what counts): set
      // for the policy scanners that audit it (checkov CKV_AZURE_78, tests/infra/test_checkov.py).
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
        alwaysReady: alwaysReady
        triggers: { http: { perInstanceConcurrency: httpPerInstanceConcurrency } }
      }
      runtime: { name: 'python', version: pythonVersion }
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
// The resource the app's Protected Resource Metadata and challenge name (shared/identity/resource.py). With the
// registration this deployment creates: its identifier URI, so scope and resource name the same URI (Entra
// requires it: AADSTS9010010). A hand-made registration keeps the app's default, <public base URL>/api/mcp,
// the MCP URL docs/sign-in.md lists among its identifier URIs (what MCP clients expect as the resource).
var ownsEntraResource = !empty(entraIdentifierUri) && !contains(appSettings, 'FIREBREAK_ENTRA_RESOURCE')
var entraResourceSettings = ownsEntraResource ? {
  FIREBREAK_ENTRA_RESOURCE: entraResource
} : {}
// The PRM's own URL comes from the public base URL. A custom domain is legitimate: a base URL the caller gives in
// appSettings stays, otherwise the deployment sets the site's host name.
var ownsPublicBaseUrl = !empty(entraClientId) && !contains(appSettings, 'FIREBREAK_PUBLIC_BASE_URL')
var publicBaseUrlSettings = ownsPublicBaseUrl ? {
  FIREBREAK_PUBLIC_BASE_URL: 'https://${site.properties.defaultHostName}'
} : {}
// Without a list the app admits any client the tenant lets obtain a token for the API (settings.py).
var ownsClientAllowList = !empty(entraClientId) && !empty(allowedClientApplications)
var clientAllowListSettings = ownsClientAllowList ? {
  FIREBREAK_ENTRA_ALLOWED_CLIENT_IDS: join(allowedClientApplications, ',')
} : {}

// The Durable Task Scheduler: host.json's storage provider is switched by the host's own override settings
// (AzureFunctionsJobHost__<path>), so one package runs on either backend. Both connection properties point at
// the scheduler: the Durable scale extension reads `connectionName` before `connectionStringName`
// (TriggerMetadataExtensions.ResolveConnectionName in Azure/azure-functions-durable-extension), and host.json's
// `connectionName` names the Storage account. host.json's bundle range starts at 4.30.0, the first
// non-preview bundle with the azureManaged provider.
var schedulerSettings = useScheduler ? {
  AzureFunctionsJobHost__extensions__durableTask__storageProvider__type: 'azureManaged'
  AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionName: 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING'
  AzureFunctionsJobHost__extensions__durableTask__storageProvider__connectionStringName: 'DURABLE_TASK_SCHEDULER_CONNECTION_STRING'
  DURABLE_TASK_SCHEDULER_CONNECTION_STRING: 'Endpoint=${schedulerEndpoint};Authentication=ManagedIdentity;ClientID=${identityClientId}'
} : {}

// HTTP streams (azurefunctions-extensions-http-fastapi, functions/http.py) need the worker to index at init on
// Python 3.12 and older (pythonVersion 3.11); 3.13 indexes at init anyway, where the setting is harmless.
// Without it on 3.11 every HTTP function fails.
var runtimeSettings = {
  PYTHON_ENABLE_INIT_INDEXING: '1'
}

// A secret setting is a Key Vault reference, written when its secure parameter is given on this deployment OR
// the site already has the setting (an earlier deployment wrote it). The `appsettings` resource replaces all
// settings, so a reference written only when the value is given would vanish on a redeploy without it, though
// the vault still holds the secret (and runs sealed with the old key could no longer be opened). Writing all
// seven always would leave references to secrets never stored: unresolved for ever, and health would report
// them. Only the secret settings are read back from the site (not all of them, as AVM's
// retainCurrentAppSettings does), so a setting this template drops, such as the scheduler overrides after
// switching back, still goes. To remove a secret: delete the app setting, then the vault secret.
// The secret names are main.bicep's `secretEntries`; tests/infra/test_function_app.py keeps the two equal.
var vaultRef = '@Microsoft.KeyVault(VaultName=${keyVaultName};SecretName='
// Runtime value (list* is evaluated when the settings resource deploys, after the site exists: on the first
// deployment it holds only the platform's defaults).
var currentSettings = list('${site.id}/config/appsettings', '2024-04-01').properties
// The setting names to write: given now, or already on the site (object keys; the values are not used).
var knownSecretSettings = union(currentSettings, givenSecretSettings)
var secretReferences = union(
  contains(knownSecretSettings, 'FIREBREAK_SECRETS_KEY') ? { FIREBREAK_SECRETS_KEY: '${vaultRef}run-secrets-key)' } : {},
  contains(knownSecretSettings, 'FIREBREAK_NEUBIRD_PASSWORD') ? { FIREBREAK_NEUBIRD_PASSWORD: '${vaultRef}neubird-password)' } : {},
  contains(knownSecretSettings, 'FIREBREAK_LLM_API_KEY') ? { FIREBREAK_LLM_API_KEY: '${vaultRef}llm-api-key)' } : {},
  contains(knownSecretSettings, 'FIREBREAK_INVESTIGATIONS_GITHUB_TOKEN') ? { FIREBREAK_INVESTIGATIONS_GITHUB_TOKEN: '${vaultRef}github-token)' } : {},
  contains(knownSecretSettings, 'FIREBREAK_INVESTIGATIONS_S3_ACCESS_KEY_ID') ? { FIREBREAK_INVESTIGATIONS_S3_ACCESS_KEY_ID: '${vaultRef}s3-access-key-id)' } : {},
  contains(knownSecretSettings, 'FIREBREAK_INVESTIGATIONS_S3_SECRET_ACCESS_KEY') ? { FIREBREAK_INVESTIGATIONS_S3_SECRET_ACCESS_KEY: '${vaultRef}s3-secret-access-key)' } : {},
  contains(knownSecretSettings, 'FIREBREAK_INVESTIGATIONS_MCP_SERVERS') ? { FIREBREAK_INVESTIGATIONS_MCP_SERVERS: '${vaultRef}investigations-mcp-servers)' } : {}
)

// Safety switches on Azure that no caller may turn: stdio MCP servers would run processes inside the host.
var safetySettings = {
  FIREBREAK_INVESTIGATIONS_MCP_ALLOW_STDIO: 'false'
}

// Easy Auth's Protected Resource Metadata (preview, App Service "Configure built-in MCP server authorization"):
// the scopes an MCP client asks for, served by the platform at /.well-known/oauth-protected-resource.
var easyAuthSettings = easyAuthOn ? {
  WEBSITE_AUTH_PRM_DEFAULT_WITH_SCOPES: join(empty(easyAuthScopes) ? [easyAuthDefaultScope] : easyAuthScopes, ',')
} : {}

// telemetryMode by the host's override setting (ScriptHostBuilderExtensions reads AzureFunctionsJobHost:
// telemetryMode from configuration), so the same package runs in either mode. PYTHON_ENABLE_OPENTELEMETRY lets
// the worker carry the host's trace context into the app's own OpenTelemetry (the Azure Monitor distro the app
// configures with the identity); the host exports with APPLICATIONINSIGHTS_AUTHENTICATION_STRING in both modes.
var openTelemetrySettings = openTelemetryEnabled ? {
  AzureFunctionsJobHost__telemetryMode: 'OpenTelemetry'
  PYTHON_ENABLE_OPENTELEMETRY: 'true'
} : {}

// Settings the deployment owns come last, so `appSettings` cannot turn dev mode on, trust App Service
// headers without Easy Auth in front, allow stdio MCP servers, replace a secret reference with a plain value,
// or point the app at other stores.
var owned = union(
  runtimeSettings,
  identitySettings,
  entraSettings,
  entraResourceSettings,
  publicBaseUrlSettings,
  clientAllowListSettings,
  schedulerSettings,
  secretReferences,
  safetySettings,
  easyAuthSettings,
  openTelemetrySettings
)

resource settings 'Microsoft.Web/sites/config@2024-04-01' = {
  parent: site
  name: 'appsettings'
  properties: union(defaults, appSettings, owned)
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
          allowedAudiences: [entraClientId, entraResource]
          // Without a policy Easy Auth admits any client and any principal of the tenant. The policy checks the
          // token's appid/azp and oid/groups; a valid token outside it gets 403.
          defaultAuthorizationPolicy: {
            allowedApplications: easyAuthClientApplications
            allowedPrincipals: allowedPrincipals
          }
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
