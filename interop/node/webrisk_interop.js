// Runs Google's Node client (@google-cloud/web-risk) in REST mode against
// a urlhash server: computeDiff, searchUris, searchHashes. Prints one JSON
// object with what the client decoded; exits non-zero on an error.
'use strict';
const {WebRiskServiceClient} = require('@google-cloud/web-risk');

async function main() {
  const [endpoint, key, uri, hashPrefixB64] = process.argv.slice(2);
  const u = new URL(endpoint);
  const newClient = apiKey => new WebRiskServiceClient({
    fallback: true, // REST: enums as numbers, the key in x-goog-api-key
    apiKey,
    apiEndpoint: u.hostname,
    port: Number(u.port),
    protocol: u.protocol.replace(':', ''),
  });
  const client = newClient(key);
  const out = {};
  const [diff] = await client.computeThreatListDiff({
    threatType: 'MALWARE',
    constraints: {supportedCompressions: ['RAW', 'RICE']},
  });
  out.diff = {
    responseType: diff.responseType,
    riceEntries: diff.additions && diff.additions.riceHashes ? Number(diff.additions.riceHashes.entryCount) + 1 : 0,
    rawBytes: diff.additions ? (diff.additions.rawHashes || []).reduce((n, r) => n + Buffer.from(r.rawHashes).length, 0) : 0,
    version: Buffer.from(diff.newVersionToken).toString('base64'),
    checksum: Buffer.from(diff.checksum.sha256).toString('hex'),
  };
  const [again] = await client.computeThreatListDiff({
    threatType: 'MALWARE',
    versionToken: diff.newVersionToken,
    constraints: {supportedCompressions: ['RICE']},
  });
  out.again = {responseType: again.responseType};
  const [uris] = await client.searchUris({uri, threatTypes: ['MALWARE']});
  out.uris = {threatTypes: uris.threat ? uris.threat.threatTypes : []};
  const [hashes] = await client.searchHashes({hashPrefix: Buffer.from(hashPrefixB64, 'base64'), threatTypes: ['MALWARE']});
  out.hashes = {count: (hashes.threats || []).length};
  try {
    await newClient('wrong').computeThreatListDiff({threatType: 'MALWARE'});
    out.badKey = 'no error';
  } catch (e) {
    out.badKey = e.message.split('\n')[0];
  }
  console.log(JSON.stringify(out));
}

main().catch(e => {
  console.error(e);
  process.exit(1);
});
