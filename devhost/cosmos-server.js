#!/usr/bin/env node
// Start @vercel/cosmosdb-server with fixes that the app's tests and benchmarks depend on. A point read
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

// Conditional patch (a filter predicate, `condition`): the server checks it by querying the WHOLE container
// (and lower-cases the predicate first). Check it against the one document instead: the same query text,
// run over that document alone, with the predicate as written, as Cosmos DB does.
const patchOps = require("@vercel/cosmosdb-server/lib/handler/_patch-operations");
const { parsePartitionKey } = require("@vercel/cosmosdb-server/lib/utils/get-partition-from-header");

const originalPatch = patchOps.patchOperation;
const PREFIXES = [/^\s*from\s+c\s+where\s+/i, /^\s*where\s+/i];

function conditionQuery(condition) {
  if (/\bselect\b/i.test(condition)) return condition;
  for (const prefix of PREFIXES) {
    if (prefix.test(condition)) return `SELECT * FROM c WHERE c.id = @id AND (${condition.replace(prefix, "")})`;
  }
  return `SELECT * ${condition} AND c.id = @id`;
}

patchOps.patchOperation = (collection, input) => {
  if (!input.condition) return originalPatch(collection, input);
  const partitionKey = parsePartitionKey(input.partitionKey, input.id);
  const data = collection.document(input.id, partitionKey).read();
  if (data) {
    let holds;
    try {
      const query = collection.documents._getQuery(conditionQuery(input.condition));
      holds = query.exec([data], { parameters: [{ name: "@id", value: input.id }] }).result.length > 0;
    } catch (err) {
      return { statusCode: 400, body: { code: "BadRequest", message: "Invalid condition in patch request." } };
    }
    if (!holds) {
      return {
        statusCode: 412,
        body: { code: "PreconditionFailed", message: "Condition specified in the patch request is not satisfied." },
      };
    }
  }
  return originalPatch(collection, { ...input, condition: undefined });
};

// Transactional batch: the server's handler has no Patch and is not atomic (a failed operation leaves the
// earlier ones applied). This one runs the operations in order within one turn of the event loop (nothing
// else runs in between), and when one fails, undoes the applied ones (restores the prior documents
// exactly, _etag and _ts included, and deletes created ones). As Cosmos DB: the failed operation answers
// its own status, every other one 424, and the response is 207 Multi-Status.
const batchDocuments = require("@vercel/cosmosdb-server/lib/handler/batch-documents");
const documentOperations = require("@vercel/cosmosdb-server/lib/handler/_document-operations");
const readJson = require("@vercel/cosmosdb-server/lib/json").default;
const trueHeader = require("@vercel/cosmosdb-server/lib/true-header").default;
const partitionHeader = require("@vercel/cosmosdb-server/lib/utils/get-partition-from-header").default;

const MAX_BATCH_OPERATIONS = 100;
const WRITES = {
  Create: documentOperations.createOperation,
  Upsert: documentOperations.upsertOperation,
  Replace: documentOperations.replaceOperation,
  Delete: documentOperations.deleteOperation,
  Patch: (collection, input) =>
    patchOps.patchOperation(collection, {
      ...input,
      operations: (input.resourceBody || {}).operations,
      condition: (input.resourceBody || {}).condition,
    }),
};

function targetId(input) {
  return input.resourceBody && input.resourceBody.id !== undefined && input.operationType !== "Patch"
    ? input.resourceBody.id
    : input.id;
}

function runOperation(collection, input, header, pk) {
  const type = input ? input.operationType : null;
  if (type === "Read") return documentOperations.readOperation(collection, input);
  const write = WRITES[type];
  if (!write) return { statusCode: 400, body: { message: `Operation type '${type}' is not supported in Batch.` } };
  const body = input.resourceBody;
  if (type !== "Delete" && type !== "Patch" && body && collection.documents._getPartition(body) !== pk) {
    return { statusCode: 400, body: { message: "The partition key of the document differs from the batch's." } };
  }
  if (type === "Patch" && !(body && Array.isArray(body.operations))) {
    return { statusCode: 400, body: { message: "A Patch operation needs resourceBody.operations." } };
  }
  return write(collection, input);
}

batchDocuments.default = async (account, req, res, { dbId, collId }) => {
  const body = await readJson(req);
  const atomic = trueHeader(req, "x-ms-cosmos-batch-atomic");
  const continueOnError = trueHeader(req, "x-ms-cosmos-batch-continue-on-error");
  const collection = account.database(dbId).collection(collId);
  if (!collection.read()) {
    res.statusCode = 404;
    return {};
  }
  if (!Array.isArray(body) || body.length === 0 || body.length > MAX_BATCH_OPERATIONS) {
    res.statusCode = 400;
    return { message: `A batch holds 1 to ${MAX_BATCH_OPERATIONS} operations.` };
  }
  const header = partitionHeader(req);
  let pk;
  try {
    pk = parsePartitionKey(header);
  } catch (err) {
    res.statusCode = 400;
    return { message: "A batch needs its partition key header." };
  }
  const results = [];
  const undo = []; // [id, the document before the operation or null], in order applied
  let failedAt = -1;
  for (let i = 0; i < body.length; i += 1) {
    if (failedAt >= 0 && !continueOnError) {
      results.push({ statusCode: 424, requestCharge: 0 });
      continue; // eslint-disable-line no-continue
    }
    const input = { ...body[i], partitionKey: header };
    const id = targetId(input);
    const prior = id === undefined ? null : collection.document(id, pk).read();
    let result;
    try {
      result = runOperation(collection, input, header, pk);
    } catch (err) {
      result = { statusCode: 400, body: { code: "BadRequest", message: String(err && err.message) } };
    }
    if (result.statusCode >= 400) {
      if (failedAt < 0) failedAt = i;
      results.push({ statusCode: result.statusCode, requestCharge: 0, resourceBody: result.body });
      continue; // eslint-disable-line no-continue
    }
    if (input.operationType !== "Read") undo.push([id, prior ? structuredClone(prior) : null]);
    results.push({
      statusCode: result.statusCode,
      requestCharge: 1,
      eTag: result.body ? result.body._etag : undefined,
      resourceBody: result.body,
    });
  }
  if (failedAt >= 0 && atomic) {
    for (let j = undo.length - 1; j >= 0; j -= 1) {
      const [id, prior] = undo[j];
      if (collection.document(id, pk).read()) collection.documents.delete(id, pk);
      if (prior) collection.documents._set(prior);
    }
    res.statusCode = 207;
    return results.map((r, i) => (i === failedAt ? r : { statusCode: 424, requestCharge: 0 }));
  }
  return results;
};

// Required only now, so its route table picks up the handlers above.
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
