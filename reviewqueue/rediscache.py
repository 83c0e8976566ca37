"""Django's Redis cache, with one redis-py client per connection pool instead of one per call.

Django's ``RedisCacheClient`` makes a new ``redis.Redis`` for every cache operation, and
redis-py fills a table of some 170 response callbacks in each one: more time than the round
trip to a local Redis, and the queue makes several cache reads a page. A client
is safe to share between threads: it takes a connection from its pool for each command.
"""

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class ReusingRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(pool)
        if client is None:
            client = self._clients[pool] = self._client(connection_pool=pool)
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ReusingRedisCacheClient
