// Preloaded (`node --require`) into devhost/cosmos-server.js: the account document advertises the port in
// COSMOS_ADVERTISED_PORT instead of the one the server listens on. The Cosmos SDK routes every request to
// the advertised endpoint, so a TCP switch on that port (tests/support/tcp_switch.py) sees all of them.
"use strict";
const account = require("@vercel/cosmosdb-server/lib/account");

const advertised = parseInt(process.env.COSMOS_ADVERTISED_PORT || "", 10);
const Original = account.default;
account.default = class extends Original {
  constructor(host, port) {
    super(host, advertised || port);
  }
};
