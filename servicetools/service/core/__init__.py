"""The service's domain, apart from HTTP: storage, vault, pipeline, configurations, documents.

The vault's bytes live in a backend of `objectstore`: a folder (the embedded default),
or S3 (`s3`, the ``scale`` extra).

The routes (`servicetools.service.routes`) call into these; these never import a route.
"""
