#!/usr/bin/env node
// Start @vercel/cosmosdb-server with one fix that the app's tests and benchmarks depend on: a point read
// of a missing document answers 404 NotFound, as Cosmos DB does, instead of crashing into a 500. The
// client-side fallback in shared/storage/cosmos.py had to re-ask with a query, which this server
// answers by scanning the whole container, so every miss got slower as the data grew.
"use strict";
const readDocument = require("@vercel/cosmosdb-server/lib/handler/read-document");

const original = readDocument.default;
readDocument.default = (account, req, res, params) => {
  try {
    return original(account, req, res, params);
  } catch (err) {
    // The original dereferences the stored document before checking that it exists.
    if (err instanceof TypeError) {
      res.statusCode = 404;
      return { code: "NotFound", message: "Entity with the specified id does not exist in the system." };
    }
    throw err;
  }
};

// Required only now, so its route table picks up the handler above.
const { createHttpsServer } = require("@vercel/cosmosdb-server");

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : fallback;
};
const host = option("--host", "127.0.0.1");
const port = parseInt(option("--port", "8081"), 10);
const server = createHttpsServer().listen(port, host, () => {
  console.log(`Ready to accept HTTPS connections at ${host}:${port}`);
});
