"""The service's domain, apart from HTTP: stores, vault, pipelines, configurations, documents.

Each room is a module named for what it holds. A family shares a prefix: the plain name
is what the rest of the service uses (a protocol, or the vault itself), and each
backend sits beside it with its own name:

=====================  ================================================================
`records`              what every store hands out: `User`, ids, key hashes, statuses
                       and vault records as wire objects
`store`                the `Storage` protocol both stores offer, `StoreUnavailable`
`store_sqlite`         the embedded store: SQLite files in the data folder
`store_postgres`       the scale-out store: PostgreSQL (``--database``, ``scale`` extra)
`vault`                vault documents (records in the store, bytes in an object
                       store) and the choice of object store from ``--vault``
`vault_objects`        the `Objects` protocol the vault needs, `StorageError`
`vault_folder`         the embedded object store: files in the data folder
`vault_s3`             the scale-out object store: S3 (``scale`` extra)
`pipeline`             the `Pipeline` protocol, `Job`, one job's run through the stages
`pipeline_pool`        the embedded pipeline: engine worker processes beside SQLite
`pipeline_queued`      the scale-out pipeline: the API side of the job queue
`pgqueue`              the job queue in PostgreSQL: claims, leases, retries
`worker`               the job queue's engine worker processes (``servicetools worker``)
`backends`             the one place the settings pick a store and its pipeline
`heavy_requests`       the helper process for request work too heavy to share the
                       service process (large updates)
`configs`              configurations and classifiers (D9, D13)
`documents`            what a document is, judged by its bytes; the D12 limits
`hosted`               D14 downloads, with the private-address guard
`results`              extracted data objects, and updates to them (D8)
`outputschema`         the output schema's JMESPath expressions (D11)
=====================  ================================================================

Without the ``scale`` extra, only the embedded rooms are imported: `backends` imports
the PostgreSQL ones, and `vault` the S3 one, only when the settings ask for them.

The routes (`servicetools.service.routes`) call into these; these never import a route.
"""
