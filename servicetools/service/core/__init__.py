"""The service's domain, apart from HTTP: storage, vault, pipeline, configurations, documents.

The vault's bytes live in an object store (`vault_objects`): a folder (`vault_folder`,
the embedded default), or S3 (`vault_s3`, the ``scale`` extra).

The routes (`servicetools.service.routes`) call into these; these never import a route.
"""
