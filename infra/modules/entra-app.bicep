extension microsoftGraphV1

// The MCP server's Entra app registration, created by the deployment (createEntraApp, off by default: the
// deployer needs Microsoft Graph rights, e.g. the Application Developer role, which `az deployment` alone
// does not give). It exposes one delegated scope, user_impersonation, pre-authorises the MCP clients given
// (no consent prompt for them) and has no client secret: its only credential is the app's user-assigned
// managed identity, as a federated identity credential (the app can act as the registration, e.g. for
// on-behalf-of calls, with a token of its identity). The Graph extension is configured in
// infra/bicepconfig.json. Modelled on Azure-Samples/remote-mcp-functions-python (infra/app/entra.bicep).
@description('Immutable unique name of the registration: redeploying updates the same one.')
param appUniqueName string
param displayName string
@description('Principal (object) id of the app\'s user-assigned managed identity.')
param managedIdentityPrincipalId string
// Well-known first-party public clients one may pre-authorise (ids, never secrets):
//   Visual Studio Code (its MCP client signs in with it): aebc6443-996d-45c2-90f0-388ff96faa56
//     (microsoft/vscode, extensions/microsoft-authentication: DEFAULT_CLIENT_ID)
//   Azure CLI (`az account get-access-token --scope api://.../user_impersonation`): 04b07795-8ddb-461a-bbee-02f9e1bf7b46
//     (Azure/azure-cli, src/azure-cli-core/azure/cli/core/auth/identity.py: AZURE_CLI_CLIENT_ID)
@description('Client (application) ids allowed to request user_impersonation without a consent prompt.')
param preAuthorizedClientIds array = []

var scopeId = guid(appUniqueName, 'user_impersonation')
var scopes = [
  {
    id: scopeId
    value: 'user_impersonation'
    type: 'User'
    isEnabled: true
    adminConsentDisplayName: 'Use Firebreak as you'
    adminConsentDescription: 'Lets the application call Firebreak\'s MCP server and API as the signed-in user.'
    userConsentDisplayName: 'Use Firebreak as you'
    userConsentDescription: 'Lets the application call Firebreak\'s MCP server and API as you.'
  }
]

resource registration 'Microsoft.Graph/applications@v1.0' = {
  uniqueName: appUniqueName
  displayName: displayName
  signInAudience: 'AzureADMyOrg'
  // api://<tenantId>/<string> is one of the secure patterns tenants with the identifier URI restriction accept
  // (learn.microsoft.com/entra/identity-platform/identifier-uri-restrictions); api://<string> alone is refused
  // there. Clients ask for `<this URI>/user_impersonation` (function-app.bicep's entraIdentifierUri).
  identifierUris: ['api://${tenant().tenantId}/${appUniqueName}']
  api: {
    // v2 tokens: the audience (aud) is the client id, which the app validates (FIREBREAK_ENTRA_AUDIENCE).
    requestedAccessTokenVersion: 2
    oauth2PermissionScopes: scopes
    preAuthorizedApplications: [
      for clientId in preAuthorizedClientIds: {
        appId: clientId
        delegatedPermissionIds: [scopeId]
      }
    ]
  }
}

resource servicePrincipal 'Microsoft.Graph/servicePrincipals@v1.0' = {
  appId: registration.appId
}

resource managedIdentityCredential 'Microsoft.Graph/applications/federatedIdentityCredentials@v1.0' = {
  name: '${registration.uniqueName}/app-managed-identity'
  description: 'The Function App\'s user-assigned managed identity (no client secret).'
  audiences: ['api://AzureADTokenExchange']
  issuer: '${environment().authentication.loginEndpoint}${tenant().tenantId}/v2.0'
  subject: managedIdentityPrincipalId
}

@description('The registration\'s application (client) id: the token audience.')
output clientId string = registration.appId
output identifierUri string = registration.identifierUris[0]
output servicePrincipalId string = servicePrincipal.id
