"""The service's domain, apart from HTTP: storage, vault, pipeline, configurations, documents.

The routes (`servicetools.service.routes`) call into these; these never import a route.
"""
