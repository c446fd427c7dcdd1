"""The local reference service: the whole interface on one machine (the ``service`` extra).

=============  =====================================================================
`app`          `create_app(settings)`: FastAPI app, error handlers, OpenAPI
`settings`     the one settings object; every D12/D14 limit is a field
`deps`         what routes share: parts, the caller from the token, JSON bodies
`errors`       `ApiError`, answered as the D3 body
`routes`       one router per resource: ``extraction``, ``vault``
`core`         the records both stores share, the stores (SQLite, PostgreSQL), the
               vault and its object stores (folder, S3), the pipelines (process
               pool, job queue) and `backends`, which picks a store and its
               pipeline; configs, documents, hosted downloads, result updates,
               output schema (its docstring maps every module)
`engine`       documents -> words -> field values and table cells; imports only
               `servicetools.wire`, never the service around it
=============  =====================================================================

Importing this package without the extra raises `servicetools.extras.MissingExtra`,
which says ``pip install 'servicetools[service]'``.
"""

from ..extras import require

require("service", feature="servicetools.service (the local reference service)")
